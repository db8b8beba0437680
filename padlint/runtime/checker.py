"""The checker: runs the checks of one metadata object and keeps the tally.

One :class:`Checker` exists while hooks are installed (see
:mod:`padlint.runtime.hooks`); an explicit API call with a ``mode`` creates
one of its own, which shares the installed checker's tally.
"""

from __future__ import annotations

import os
import threading
import traceback
import types
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

import numpy as np
import torch
from torch import Tensor

from padlint.runtime import checks, context
from padlint.runtime.context import StepCounts
from padlint.runtime.errors import MAX_ROWS_SHOWN, StalePaddingError, Violation
from padlint.runtime.modes import MODES, parse_mode  # noqa: F401 - MODES, parse_mode re-exported
from padlint.runtime.spec import FieldRule, RuntimeSpec

#: ``deferred``: no host synchronisation (device results read when ready);
#: ``sync``: one synchronisation per metadata object; ``skip``: device fields not checked.
CUDA_POLICIES = ("deferred", "sync", "skip")

_HERE = os.path.dirname(os.path.abspath(__file__))

#: pytest leaves the frames of this module out of tracebacks (padlint's own frames and locals)
__tracebackhide__ = True

_ABSENT = object()
#: When :meth:`Checker.check_object` also compares the row counts of an object's fields
#: (:meth:`Checker.width_violations`): at construction, when the object is whole; not at an
#: attribute store (fields are stored one at a time), nor in an explicit check (check_metadata
#: reports lengths that disagree with the counts it is given itself).
WIDTH_CHECKED_WHEN = ("construction",)

#: a field a class serves through a property or another computed descriptor: never read
_COMPUTED = object()


def _field_reader(cls: type, name: str) -> Any:
    """How to read field ``name`` of a ``cls`` instance without running its code: None (from
    ``__dict__`` only), a slot or named-tuple field descriptor (reading it runs no user code),
    or :data:`_COMPUTED` (a property or other computed descriptor: never read, since reading it
    may warn, allocate or copy device memory to the host)."""
    for k in cls.__mro__:
        d = k.__dict__.get(name, _ABSENT)
        if d is _ABSENT:
            continue
        if isinstance(d, types.MemberDescriptorType) or type(d).__name__ == "_tuplegetter":
            return d
        if isinstance(d, (types.FunctionType, staticmethod, classmethod)):
            return None
        if hasattr(type(d), "__get__"):
            return _COMPUTED
        return None  # a class attribute (a dataclass default): the instance's own value is in __dict__
    return None


@dataclass
class Stats:
    """Tally of one installation (or one explicit check).

    ``objects_checked``: metadata objects seen; ``fields_checked``: fields
    whose padding rows were examined (a step without padding examines none);
    ``skipped_capture``: device fields not checkable during CUDA-graph
    capture; ``skipped_shape``: fields whose length matched neither the real
    nor the padded count of the step (e.g. micro-batch slices);
    ``skipped_unknown``: fields without counts (no provider call and nothing
    to infer from); ``skipped_unfilled``: profile fields of a checked
    object that hold None (lazily filled, or left None on purpose, as vLLM
    does under async speculative decoding) or that its class computes in a
    property (never read: reading could warn, allocate or copy); ``host_syncs``: host synchronisations the checker caused
    (0 with the deferred CUDA policy unless a violation is found).
    """

    objects_checked: int = 0
    fields_checked: int = 0
    skipped_capture: int = 0
    skipped_shape: int = 0
    skipped_unknown: int = 0
    skipped_unfilled: int = 0
    host_syncs: int = 0
    pending: int = 0
    violations: list[Violation] = field(default_factory=list)

    def line(self) -> str:
        """The one-line summary the pytest plugin prints."""
        extra = ""
        if self.skipped_shape or self.skipped_unknown:
            extra = f", {self.skipped_shape + self.skipped_unknown} skipped (shape/unknown counts)"

        def n(count: int, word: str) -> str:
            return f"{count} {word}{'' if count == 1 else 's'}"

        return (f"padlint runtime: {n(self.objects_checked, 'object')} checked, {n(self.fields_checked, 'field')} "
                f"checked, {self.skipped_capture} skipped during capture{extra}, "
                f"{n(len(self.violations), 'violation')}")

    def unfilled_line(self) -> str:
        """A second summary line when fields were skipped as not filled ("" otherwise)."""
        if not self.skipped_unfilled:
            return ""
        return (f"padlint runtime: {self.skipped_unfilled} field value(s) not filled (None, or computed by a "
                f"property) were skipped, not read")


def _location(frame: FrameType | None) -> str:
    """'file:line in function' of the first frame outside padlint.runtime and dataclasses."""
    f = frame
    while f is not None:
        fn = f.f_code.co_filename
        if not (fn.startswith((_HERE, "<string>")) or fn.endswith(("dataclasses.py", "copy.py"))):  # dataclass __init__ is compiled from "<string>"
            return f"{fn}:{f.f_lineno} in {f.f_code.co_name}"
        f = f.f_back
    return "<unknown>"


#: Frames of the test runner's and padlint's own machinery, left out of provider call stacks.
_RUNNER_DIRS = (f"{os.sep}pluggy{os.sep}", f"{os.sep}_pytest{os.sep}", f"{os.sep}pytest{os.sep}__main__.py",
                "<frozen runpy>", _HERE)


def _stack(frame: FrameType | None, limit: int = 10) -> str:
    """The call stack ending at ``frame``, at most ``limit`` frames, without pytest's
    and pluggy's frames (a test's stack is otherwise mostly their dispatch)."""
    return _stack_text(_stack_snapshot(frame, limit), limit)


def _stack_snapshot(frame: FrameType | None, limit: int = 10) -> tuple[tuple[str, int, str], ...]:
    """(file, line, function) of the frames ending at ``frame``, innermost last: what
    :func:`_stack` formats, taken now without reading any source line (a deferred device
    check keeps it and formats it only when it reports something)."""
    out = []
    f = frame
    while f is not None and len(out) < limit + 40:
        out.append((f.f_code.co_filename, f.f_lineno, f.f_code.co_name))
        f = f.f_back
    out.reverse()
    return tuple(out)


def _stack_text(snapshot: tuple[tuple[str, int, str], ...], limit: int = 10) -> str:
    frames = [traceback.FrameSummary(fn, line, name) for fn, line, name in snapshot
              if not any(d in fn for d in _RUNNER_DIRS)]
    return "".join(traceback.format_list(frames[-limit:]))


def _annotated_tensor_fields(cls: type) -> list[str]:
    """Dataclass fields of ``cls`` annotated as a tensor or an array (``torch.Tensor | None``,
    ``np.ndarray``); [] for other classes.  Reads annotations as text, imports nothing."""
    fields = getattr(cls, "__dataclass_fields__", None)
    if not isinstance(fields, dict):
        return []
    out = []
    for name, f in fields.items():
        t = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "") or repr(f.type)
        if "Tensor" in str(t) or "ndarray" in str(t) or "tensor" in repr(f.type):
            out.append(name)
    return out


class Checker:
    """Checks metadata objects against a :class:`RuntimeSpec`.

    ``mode``: "strict" raises :class:`StalePaddingError` (one per object),
    "record" appends to ``stats.violations``, "off" checks nothing.
    ``cuda_policy``: see :data:`CUDA_POLICIES`.  Thread-safe: the tally is
    guarded by a lock; step counts are per thread.
    """

    def __init__(self, spec: RuntimeSpec, mode: str = "strict", cuda_policy: str = "deferred",
                 max_rows: int = MAX_ROWS_SHOWN):
        if cuda_policy not in CUDA_POLICIES:
            raise ValueError(f"cuda_policy {cuda_policy!r}: expected one of {', '.join(CUDA_POLICIES)}")
        self.spec = spec
        self.mode = parse_mode(mode, "strict")
        self.cuda_policy = cuda_policy
        self.max_rows = max_rows
        self.stats = Stats()
        self.label = ""  # the current test id, set by the pytest plugin
        self._lock = threading.Lock()
        self._pending: deque = deque()
        self._suspend = threading.local()
        self._rules = tuple(r for r in spec.rules if not any(r.name == n for n, _ in spec.exempt))
        # (rule, name, on the token axis, offset of the padding rows, neutral) per checked field,
        # and the CPU padding-slice test bound to that neutral value
        self._plan = tuple((r, r.name, r.axis == "tokens", 1 if r.axis == "reqs+1" else 0, r.neutral,
                            checks.stale_test(r.neutral))
                           for r in self._rules)
        #: the numpy padding-slice test of each checked field (the device path's host-side test)
        self._tests = {p[1]: p[5] for p in self._plan}
        self._class_exempt: dict[type, frozenset[str]] = {}
        self._infer: dict[type, tuple[str, ...]] = {}
        self._readers: dict[tuple[type, str], Any] = {}
        #: profile coverage: class qualname -> tensor fields the profile neither checks nor exempts
        #: (from the dataclass annotations when the class is hooked, and from each class's first object)
        self.unknown_fields: dict[str, tuple[str, ...]] = {}
        self._covered: set[type] = set()
        #: CUDA graphs: (class, field, rows) -> (data_ptr, rows) of device fields seen during capture
        self._captured: dict[tuple[type, str, int], tuple[int, int]] = {}
        #: called with each list of new violations before strict mode raises (the engine plugin
        #: reports them to the pytest session); a listener that raises is ignored
        self.listeners: list = []
        # Test hooks: treat CPU tensors as device tensors / pretend a capture is running.
        self.force_device_path = False
        self.capturing = checks.stream_is_capturing

    # -- configuration ------------------------------------------------------
    def register_class(self, cls: type, infer_from: tuple[str, ...] = (), exempt: tuple[str, ...] = ()) -> None:
        """Declare ``cls`` a metadata class (replacing an earlier declaration of it).

        ``infer_from``: cumulative-offset fields, read in order, from which the
        real request count is inferred when no provider call is active (the
        first that is a 1-D CPU tensor or array, ``Tensor[num_reqs_padded + 1]``
        int32, e.g. ``query_start_loc_cpu``; trailing zero-length requests
        are padding); instances of subclasses use it too.  ``exempt``: field
        names never checked on instances of exactly ``cls``.  Metadata objects of a declared class
        in a provider's return value are checked at return if they were not
        checked before.  Raises nothing.
        """
        self._infer[cls] = tuple(infer_from)
        self._class_exempt[cls] = frozenset(exempt)
        self._note_unknown(cls, _annotated_tensor_fields(cls))

    def _known(self, cls: type) -> set[str]:
        known = set(self.spec.by_name) | {n for n, _ in self.spec.exempt}
        for k, names in self._class_exempt.items():
            if issubclass(cls, k):
                known |= names
        return known

    def _note_unknown(self, cls: type, names: Any) -> None:
        unknown = set(names) - self._known(cls)
        if unknown:
            key = f"{cls.__module__}.{cls.__qualname__}"
            with self._lock:
                self.unknown_fields[key] = tuple(sorted(unknown | set(self.unknown_fields.get(key, ()))))

    def _cover_instance(self, obj: Any) -> None:
        """Profile coverage from a class's first checked object: tensor and array values it holds."""
        cls = type(obj)
        self._covered.add(cls)
        values = getattr(obj, "__dict__", None) or {}
        self._note_unknown(cls, [k for k, v in values.items() if isinstance(v, (Tensor, np.ndarray))])

    #: Depth of :meth:`suspended` with ``all_threads=True`` (an instance attribute once used),
    #: and the lock guarding it (shared: suspending is rare, reading the counter is lock-free).
    _suspend_all = 0
    _suspend_all_lock = threading.Lock()

    @property
    def active(self) -> bool:
        return self.mode != "off" and not self._suspend_all and not getattr(self._suspend, "depth", 0)

    @property
    def suspended_here(self) -> bool:
        """True inside :meth:`suspended` in the calling thread, or inside ``suspended(all_threads=True)``."""
        return bool(self._suspend_all or getattr(self._suspend, "depth", 0))

    @contextmanager
    def suspended(self, all_threads: bool = False) -> Iterator[None]:
        """No checks in this thread inside the block; with ``all_threads``, no checks in
        any thread until the block ends (the pytest ``padlint_off`` marker: a test's own
        threads are covered too)."""
        if all_threads:
            with self._suspend_all_lock:
                self._suspend_all += 1
            try:
                yield
            finally:
                with self._suspend_all_lock:
                    self._suspend_all -= 1
            return
        self._suspend.depth = getattr(self._suspend, "depth", 0) + 1
        try:
            yield
        finally:
            self._suspend.depth -= 1

    # -- reading fields without side effects ---------------------------------
    def field_value(self, obj: Any, name: str) -> Any:
        """The value of field ``name`` as stored on ``obj`` (``__dict__``, a slot, a named-tuple
        field), never through a property: None when absent or not filled, :data:`_COMPUTED`
        when the class computes it."""
        values = getattr(obj, "__dict__", None)
        if values is not None and name in values:
            return values[name]
        cls = type(obj)
        key = (cls, name)
        reader = self._readers.get(key, _ABSENT)
        if reader is _ABSENT:
            reader = self._readers[key] = _field_reader(cls, name)
        if reader is None or reader is _COMPUTED:
            return reader
        try:
            return reader.__get__(obj, cls)
        except AttributeError:  # a slot never assigned
            return None

    # -- counts ---------------------------------------------------------------
    def _infer_counts(self, obj: Any) -> StepCounts | None:
        """Counts inferred from the object: trailing requests with zero query length are padding.

        Reads the first CPU cumulative-offset field named by ``infer_from``
        (``query_start_loc_cpu``: ``Tensor[num_reqs_padded + 1] int32``);
        the padded counts are then each field's own length.  None when no
        such field is on the CPU (reading a device tensor would synchronise).
        """
        names = self._infer.get(type(obj))
        if names is None:
            names = next((v for k, v in self._infer.items() if isinstance(obj, k)), ())
        for name in names:
            v = self.field_value(obj, name)
            a = checks.as_numpy(v) if v is not None and v is not _COMPUTED else None
            if a is None or a.ndim != 1 or len(a) < 1:
                continue
            nonempty = np.flatnonzero(np.diff(a))  # requests with a non-zero query length
            real = int(nonempty[-1]) + 1 if nonempty.size else 0
            return StepCounts(real, None, int(a[real]), None, provider=f"inferred from {name}",
                              names={"reqs": ("num_reqs", "num_reqs_padded"),
                                     "tokens": ("num_tokens", "num_tokens_padded")})
        return None

    # -- the check -----------------------------------------------------------
    def check_object(self, obj: Any, counts: StepCounts | None = None, *, when: str = "construction",
                     frame: FrameType | None = None, only: tuple[str, ...] | None = None,
                     mismatched: list[tuple[str, int, int]] | None = None) -> list[Violation]:
        """Check the profile fields of ``obj`` (or only the names in ``only``).

        ``counts``: the step's counts; None means the innermost provider
        call, else inferred from the object.  Returns the violations found
        now (deferred device results are reported later); in strict mode
        raises :class:`StalePaddingError` instead.  ``mismatched``, when
        given, receives ``(field, its length, the length the counts say)``
        for each field skipped because its length matches neither count.
        """
        if not self.active:
            return []
        if only is None and when in WIDTH_CHECKED_WHEN:
            widths = self.width_violations(obj, when=when, frame=frame)
            if widths:
                self._emit(widths)  # strict mode raises here
        if self._pending:
            self._drain(block=False)
        if type(obj) not in self._covered and type(obj) in self._infer:
            self._cover_instance(obj)
        if counts is None:
            counts = context.current() or self._infer_counts(obj)
        if counts is None:
            rules = self._rules if only is None else tuple(r for r in (self.spec.rule(n) for n in only) if r)
            present = sum(1 for r in rules if self.field_value(obj, r.name) not in (None, _COMPUTED))
            with self._lock:
                self.stats.objects_checked += 1
                self.stats.skipped_unknown += present
            return []
        force = self.force_device_path
        # CUDA graphs: device fields seen during a capture are what every replay of that size reads
        graphs = (force or torch.cuda.is_initialized()) and (self._captured or self.capturing())
        if (not graphs and mismatched is None and counts.num_reqs_padded is not None
                and counts.num_reqs_padded == counts.num_reqs
                and counts.num_tokens_padded is not None and counts.num_tokens_padded == counts.num_tokens):
            with self._lock:  # a step without padding rows: nothing to examine
                self.stats.objects_checked += 1
            if counts.frame is not None and not any(o is obj for o, _ in counts.seen):
                counts.seen.append((obj, {}))  # checked: not again at provider return
            return []
        track = counts.frame is not None  # inside a provider call: remember tensors for the re-check at return
        plan = self._plan if only is None else tuple(p for p in self._plan if p[0].name in only)
        exempt = self._class_exempt.get(type(obj), ())
        rr, rp, tr, tp = counts.num_reqs, counts.num_reqs_padded, counts.num_tokens, counts.num_tokens_padded
        values = getattr(obj, "__dict__", None)
        seen: dict[str, tuple[Any, int]] | None = {} if track else None
        cpu_bad: list = []
        dev_items: list = []
        replay_bad: list = []
        n_checked = n_shape = n_capture = 0
        capturing: bool | None = None
        n_unfilled = 0
        for rule, name, tokens, off, neutral, stale in plan:
            if values is not None and name in values:
                t = values[name]
                if t is None:
                    n_unfilled += 1  # declared, not filled (lazily filled, or None on purpose)
                    continue
            else:
                t = self.field_value(obj, name)
                if t is None:
                    continue
                if t is _COMPUTED:  # a property: reading it could warn, allocate or copy to the host
                    n_unfilled += 1
                    continue
            if exempt and name in exempt:
                continue
            if tokens:
                real, padded = tr, tp
            else:
                real, padded = rr, rp
            if real is None:
                continue
            start = real + off
            field_t = t
            if graphs and isinstance(t, Tensor) and t.ndim and (force or t.device.type not in ("cpu", "meta")):
                if capturing is None:
                    capturing = self.capturing()
                stop = (t.shape[0] if padded is None else padded + off)
                key = (type(obj), name, stop)
                if capturing:
                    with self._lock:
                        self._captured[key] = (t.data_ptr(), t.shape[0])
                else:
                    cap = self._captured.get(key)
                    if cap is not None and t.data_ptr() != cap[0]:
                        replay_bad.append((rule, t, real, stop - off, start, stop, cap))
                        continue
                    if cap is not None and t.shape[0] < cap[1] and start < cap[1]:
                        # rows past this slice up to the captured extent are read by the replay too
                        t = t.as_strided((cap[1], *t.shape[1:]), t.stride())
                        padded = cap[1] - off
            if padded is not None and start >= padded + off and mismatched is None:
                continue  # no padding rows on this axis: nothing to examine (an explicit check looks at lengths)
            if isinstance(t, Tensor):
                if seen is not None:
                    seen[name] = (field_t, field_t._version)
                a = None
                if not (force or t.is_cuda):
                    try:
                        a = t.numpy()  # a view, no copy; fails for bfloat16 or a tensor that requires grad
                    except (TypeError, RuntimeError):
                        pass
                shape = t.shape if a is None else a.shape
            elif isinstance(t, np.ndarray):
                a = t
                shape = a.shape
            else:
                continue
            if not shape:
                continue
            length = shape[0]
            if padded is None:  # inferred counts: the field's own length is its padded count
                padded = length - off
            stop = padded + off
            if mismatched is not None and (length != stop or start > stop):
                # an explicit check: (field, its length, the length the counts say)
                mismatched.append((name, length, stop if length != stop else start))
                n_shape += 1
                continue
            if start >= stop or length <= start:
                continue  # no padding rows: nothing to examine
            if length != stop:
                n_shape += 1
                continue
            if a is None:
                if t.device.type == "meta":  # no values (shape-only tracing): nothing to examine
                    continue
                if force or t.device.type != "cpu":
                    if capturing is None:
                        capturing = self.capturing()
                    if capturing or self.cuda_policy == "skip":
                        n_capture += capturing
                        continue
                    dev_items.append((rule, t, real, padded, start, stop))
                    n_checked += 1
                    continue
                n_checked += 1  # e.g. bfloat16 on the CPU: torch instead of numpy
                if checks.find_stale_rows(t, start, stop, neutral)[2]:
                    cpu_bad.append((rule, t, real, padded, start, stop))
                continue
            n_checked += 1
            if stale(a, start, stop):
                cpu_bad.append((rule, t, real, padded, start, stop))
        if seen is not None:  # marks obj as checked in this provider call, even with nothing to track
            for o, d in counts.seen:
                if o is obj:
                    d.update(seen)
                    break
            else:
                counts.seen.append((obj, seen))
        with self._lock:
            st = self.stats
            st.objects_checked += 1
            st.fields_checked += n_checked
            st.skipped_shape += n_shape
            st.skipped_capture += n_capture
            st.skipped_unfilled += n_unfilled
        if not cpu_bad and not dev_items and not replay_bad:
            return []
        owner = type(obj).__name__
        found = [self._replay_violation(owner, rule, t, real, padded, start, stop, cap, counts, when, frame)
                 for rule, t, real, padded, start, stop, cap in replay_bad]
        found += [self._violation(owner, rule, t, real, padded, start, stop,
                                 checks.find_stale_rows(t, start, stop, rule.neutral, max_rows=self.max_rows),
                                 counts, when, frame)
                 for rule, t, real, padded, start, stop in cpu_bad]
        if dev_items:
            found.extend(self._device(owner, dev_items, counts, when, frame))
        return self._emit(found)

    def width_violations(self, obj: Any, *, when: str = "construction",
                         frame: FrameType | None = None) -> list[Violation]:
        """Fields of ``obj`` that disagree with the others of their axis on their row count.

        The profile fields of one object that hold a tensor or an array are grouped by axis:
        request rows ("reqs", and "reqs+1" counted without their leading entry) and token
        rows ("tokens"); within a group every field must have the same length.  The length
        most fields have is the object's (a tie: the longest, the width a CUDA graph
        replays); each field with another length is a violation (``detail`` names every
        length).  Needs no step counts.  Returns the violations (it does not raise or record
        them: :meth:`check_object` does)."""
        values = getattr(obj, "__dict__", None)
        exempt = self._class_exempt.get(type(obj), ())
        groups: dict[str, list[tuple[FieldRule, int, Any]]] = {}
        for rule in self._rules:
            if exempt and rule.name in exempt:
                continue
            if values is not None and rule.name in values:
                t = values[rule.name]
            else:
                t = self.field_value(obj, rule.name)
            if not isinstance(t, (Tensor, np.ndarray)) or not t.shape:
                continue
            rows = t.shape[0] - (1 if rule.axis == "reqs+1" else 0)
            if rows < 0:
                continue
            groups.setdefault("tokens" if rule.axis == "tokens" else "reqs", []).append((rule, rows, t))
        found: list[Violation] = []
        owner = type(obj).__name__
        for axis, items in groups.items():
            lengths: dict[int, int] = {}
            for _, n, _ in items:
                lengths[n] = lengths.get(n, 0) + 1
            if len(lengths) < 2:
                continue
            width = max(lengths, key=lambda n: (lengths[n], n))
            shown = ", ".join(f"{r.name} {n}" + (" (+1 leading offset)" if r.axis == "reqs+1" else "")
                              for r, n, _ in items)
            noun = "request" if axis == "reqs" else "token"
            for rule, n, t in items:
                if n == width:
                    continue
                is_tensor = isinstance(t, Tensor)
                found.append(Violation(
                    owner=owner, field=rule.name, axis=rule.axis, real=n, padded=width, start=0, stop=0,
                    dtype=str(t.dtype), device=str(t.device) if is_tensor else "cpu (numpy)", shape=tuple(t.shape),
                    expected="", why=rule.why, rows=(), values=(), num_bad=0,
                    detail=(f"{n} {noun} rows where the other {noun} fields of this object have {width} "
                            f"(row counts on axis {axis!r}: {shown})"),
                    fix=f"slice every {noun} field of one metadata object to the same count "
                        f"(all real, or all padded with their padding rows reset)",
                    constructed_at=_location(frame) if frame is not None else "", when=f"{when} (row counts)",
                    test=self.label))
        return found

    def _device(self, owner: str, items: list, counts: StepCounts, when: str,
                frame: FrameType | None) -> list[Violation]:
        # one cat of the padding rows as bytes, one copy to the host: two launches per object
        packed, layout = checks.pack_device_rows([(t, s, e, r.neutral) for r, t, _, _, s, e in items])
        if self.cuda_policy == "sync":
            host = packed.cpu()  # the one synchronisation for this object
            with self._lock:
                self.stats.host_syncs += 1
            return self._unpack(owner, items, (host, layout), counts, when, frame)
        # deferred: a non-blocking copy into pinned memory and an event; read when the event has completed.
        event = None
        if packed.is_cuda:
            host = torch.empty(packed.shape, dtype=packed.dtype, pin_memory=True)
            host.copy_(packed, non_blocking=True)
            event = torch.cuda.Event()
            # the copy runs on the current stream of the tensors' device, which need not be the current device
            event.record(torch.cuda.current_stream(packed.device))
        else:
            host = packed
        host = (host, layout, counts.names)  # the count names, for the fix text read later
        where = _location(frame)
        stack = _stack_snapshot(counts.frame) if counts.frame is not None else ""  # formatted when reported
        with self._lock:
            self._pending.append((owner, items, host, event, counts.describe(), when, where, stack, self.label))
            self.stats.pending = len(self._pending)
        return []

    def _unpack(self, owner: str, items: list, host: Any, counts: StepCounts | str, when: str,
                frame: FrameType | None | str, stack: str | tuple | None = None,
                label: str | None = None) -> list[Violation]:
        out = []
        data, layout = host[0], host[1]
        names = host[2] if len(host) > 2 else None
        for (rule, t, real, padded, start, stop), (rows, values, num_bad) in zip(
                items, checks.unpack_device_rows(data, layout, [(t, s, e, r.neutral) for r, t, _, _, s, e in items],
                                                 self.max_rows, [self._tests.get(r.name) for r, *_ in items])):
            if num_bad:
                out.append(self._violation(owner, rule, t, real, padded, start, stop, (rows, values, num_bad),
                                           counts, when, frame, stack, label, names))
        return out

    def _violation(self, owner: str, rule: FieldRule, t: Any, real: int, padded: int, start: int, stop: int,
                   found: tuple, counts: StepCounts | str, when: str, frame: FrameType | None | str,
                   stack: str | tuple | None = None, label: str | None = None,
                   names: dict[str, tuple[str, str]] | None = None) -> Violation:
        rows, values, num_bad = found
        is_tensor = isinstance(t, torch.Tensor)
        return Violation(
            owner=owner, field=rule.name, axis=rule.axis, real=real, padded=padded, start=start, stop=stop,
            dtype=str(t.dtype), device=str(t.device) if is_tensor else "cpu (numpy)", shape=tuple(t.shape),
            expected=rule.expected_text(), why=rule.why, rows=tuple(rows), values=tuple(values), num_bad=num_bad,
            fix=self.spec.reset_text(rule, names if names is not None else
                                     counts.names if isinstance(counts, StepCounts) else None),
            constructed_at=frame if isinstance(frame, str) else (_location(frame) if frame is not None else ""),
            provider_stack=(_stack_text(stack) if isinstance(stack, tuple) else stack) if stack is not None
            else (_stack(counts.frame) if isinstance(counts, StepCounts) else ""),
            when=when, counts_from=counts if isinstance(counts, str) else counts.describe(),
            test=self.label if label is None else label)

    def _replay_violation(self, owner: str, rule: FieldRule, t: Any, real: int, padded: int, start: int,
                          stop: int, cap: tuple[int, int], counts: StepCounts, when: str,
                          frame: FrameType | None) -> Violation:
        """A field whose storage is not the one a CUDA graph captured for this size: the graph
        replays reads of the captured storage, so this step's values never reach it."""
        return Violation(
            owner=owner, field=rule.name, axis=rule.axis, real=real, padded=padded, start=start, stop=stop,
            dtype=str(t.dtype), device=str(t.device), shape=tuple(t.shape), expected="", why=rule.why, rows=(),
            values=(), num_bad=0,
            detail=(f"storage changed since CUDA-graph capture: the graph captured for {stop} rows reads the tensor "
                    f"at 0x{cap[0]:x} ({cap[1]} rows); this step's metadata holds 0x{t.data_ptr():x}, which "
                    f"the replay never reads (its rows keep what an earlier step wrote)"),
            fix=f"copy this step's values into the captured buffer ({rule.name}_static[:n].copy_(new)) instead "
                f"of passing a new tensor, and reset its padding rows",
            constructed_at=_location(frame) if frame is not None else "", provider_stack=_stack(counts.frame),
            when=when, counts_from=counts.describe(), test=self.label)

    def _emit(self, found: list[Violation]) -> list[Violation]:
        if not found:
            return found
        with self._lock:
            self.stats.violations.extend(found)
        for listener in self.listeners:
            try:
                listener(found)
            except Exception:  # noqa: BLE001, S110 - reporting never replaces the finding
                pass
        if self.mode == "strict":
            raise StalePaddingError(found)
        return found

    # -- deferred device results --------------------------------------------
    def _drain(self, block: bool) -> list[Violation]:
        """Report deferred device results whose event has completed (all of them if ``block``)."""
        if not self._pending:
            return []
        if self.capturing():  # querying or waiting on an event is not allowed while a graph is captured
            return []
        found: list[Violation] = []
        while True:
            with self._lock:
                if not self._pending:
                    break
                owner, items, host, event, counts, when, where, stack, label = self._pending[0]
                if event is not None and not event.query():
                    if not block:
                        break
                    event.synchronize()
                    self.stats.host_syncs += 1
                self._pending.popleft()
                self.stats.pending = len(self._pending)
            found.extend(self._unpack(owner, items, host, counts, f"{when} (deferred device check)", where,
                                      stack, label))
        return self._emit(found)

    def flush(self) -> list[Violation]:
        """Wait for every deferred device check and report it (end of a test, end of a run)."""
        return self._drain(block=True)

    # -- provider return ---------------------------------------------------------
    def on_provider_return(self, counts: StepCounts, result: Any, known: set[int] | None = None) -> None:
        """Re-check fields whose tensor or version changed since they were checked,
        and check metadata objects in the provider's return value that were
        never checked (made by ``copy.copy``, which skips ``__init__``)."""
        if not self.active:
            return
        if self._pending:
            self._drain(block=False)
        checked = {id(obj) for obj, _ in counts.seen}
        for obj, before in list(counts.seen):
            values = getattr(obj, "__dict__", None) or {}
            # one comprehension over the tracked fields (the common case: nothing changed)
            maybe = [name for name, (old, version) in before.items()
                     if values.get(name) is not old or old._version != version]
            changed = []
            for name in maybe:
                old, version = before[name]
                t = values.get(name)
                if t is None:
                    t = self.field_value(obj, name)
                if isinstance(t, Tensor) and (t is not old or t._version != version):
                    changed.append(name)
            if changed:
                self.check_object(obj, counts, when="provider return (changed after construction)",
                                  only=tuple(changed))
        for obj in _metadata_in(result, tuple(self._infer)):
            if id(obj) not in checked:
                self.check_object(obj, counts, when="provider return (object not built through __init__)")


def _metadata_in(value: Any, classes: tuple[type, ...], depth: int = 2) -> Iterator[Any]:
    if not classes or value is None:
        return
    if isinstance(value, classes):
        yield value
    elif depth and isinstance(value, (tuple, list)):
        for v in value:
            yield from _metadata_in(v, classes, depth - 1)
    elif depth and isinstance(value, dict):
        for v in value.values():
            yield from _metadata_in(v, classes, depth - 1)
