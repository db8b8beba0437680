"""Abstract values and heap state of the PAD001 dataflow.

Vocabulary (see shared docs/domain.md):

* a *location* (``loc``) names storage: ``self.seq_lens``; a CpuGpuBuffer's
  host views ``.cpu``/``.np`` share ``self.query_start_loc#host`` and its
  device view is ``self.query_start_loc#dev``; a tensor created in the
  analysed code (derived, copied, ``torch.empty``) gets a fresh ``new:...`` loc.
* a :class:`Count` is a slice bound in *entry-point terms* ("counts are bound
  per call"): ``canon`` is the name as the entry point knows it, ``offset``
  the ``+ 1`` of cumulative offsets.
* a :class:`Ref` is a view of a location: the whole buffer (``count=None``)
  or rows ``[:count]`` of it.
* a :class:`Taint` is one reason a value's padding rows may be stale or
  uninitialised, with the trace steps that produced it.
* a reset records a *clean key* ``(real_canon, offset)`` on a location: rows
  ``[R + offset:]`` hold the neutral value, which covers the padding rows of
  every padded slice ``[:P + offset']`` with P paired to R and offset <= offset'.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Iterable

ALL = "*"  # Reset.real for a reset of the whole buffer


#: The words a call-path step's note ends with when the caller binds the callee's real count to
#: a padded count (``_build_attention_metadata(num_reqs=num_reqs_padded)``, a dummy run): the
#: rows the caller did not write on that path hold an earlier step's values.  Rules count the
#: paths through such a step (:func:`padlint.rules.pad001`).
PADDED_AS_REAL = "as its real count"

#: the ``count`` of a write record (:attr:`padlint.analysis.interp.Interpreter.writers`) that
#: writes a buffer's rows from a count on (a tail reset), not a prefix
TAIL_WRITE = "!tail"


@dataclass(frozen=True, order=True, slots=True)
class PadWrite:
    """One statement that writes the padding rows' value: a reset (``x[R:] = v``,
    ``x[R:].fill_(v)``, a registry policy, a Triton kernel's tail store) or an allocation
    fill (``torch.full(..., v)``).

    ``value`` is the normalised literal text ("" when not a literal), ``kind`` "reset",
    "fill", "registry" or "kernel", ``node`` a key the interpreter resolves to the written value's
    source span (0: none, e.g. ``zero_()`` or a registry slot's declared value).
    """

    path: str
    line: int
    value: str
    kind: str = "reset"
    node: int = 0


@dataclass(frozen=True, slots=True)
class Reset:
    """A reset seen on a location: rows ``[real + offset:]`` (``real`` ALL: every row)
    were written with ``value`` (normalised literal text, "" when not a literal) at ``line``.
    ``sites``: the writes that may have put the value there (several after paths join)."""

    real: str
    offset: int = 0
    value: str = ""
    line: int = 0
    sites: frozenset = frozenset()
    # path conditions the reset holds under (``(key, polarity)`` facts, see
    # ``Interpreter._cond_keys``): a reset made under ``if x is not None:`` is kept after the
    # join as holding when that test holds, and covers only reads under the same test
    when: frozenset = frozenset()
    # the rows end at this count (``x[R:P] = v``, ``v[R:]`` of ``v = x[:P]``): rows past it were not
    # written; "" for a reset to the end of the buffer.  Only a consumer that reads the whole
    # buffer (``[fields.X] reads = "buffer"``) tells the two apart
    upto: str = ""
    # the subscript dimension the rows are counted in (``x[:, R:P]``: 1); a reset covers only a
    # padded slice of the same dimension (``input_embeds[:, R:P]`` resets columns of a buffer
    # whose tokens are its rows).  A whole-buffer reset (``real`` ALL) covers every dimension
    dim: int = 0
    # the rows are known written only up to ``upto`` (a prefix ``[:upto]`` one branch of a test
    # wrote beyond the prefix both wrote, kept as rows ``[real:upto]`` under the branch's test):
    # the reset covers a padded slice to that count only
    exact: bool = False


@dataclass(frozen=True, slots=True)
class Count:
    """A slice bound: ``canon`` (entry-point name, or "" if unknown) plus ``offset`` rows."""

    canon: str
    offset: int = 0
    written: str = ""  # as written at the use site
    unpadded: bool = False  # real and padded counts are the same value on this path
    dim: int = 0            # which subscript dimension the count bounds (mrope: 1)


@dataclass(frozen=True, slots=True)
class Taint:
    """Why padding rows [real:padded] of a value may be stale (or uninitialised)."""

    buffer: str            # padded-slice / allocation expression as written, normalised
    padded: str            # padded count, entry-point terms
    offset: int            # +1 for cumulative offsets
    reason: str            # "stale" | "uninit" | "init" (a never-written buffer's allocation value, PAD005)
    dim: int = 0           # padded dimension of the source slice
    padded_written: str = ""  # the padded count as written at the slice (profile pairs by name)
    steps: tuple[tuple[int, str, str], ...] = ()  # (line, note, path), source first
    derived_from: str = ""  # for derived tensors: the input expression named in messages
    # real counts inferred from the step's writes (``buf[:k].copy_(x)`` then ``buf[:n]``: rows
    # [k:n] were not written by this step); empty when the profile pairs ``padded`` by name
    real: tuple[str, ...] = ()
    # the buffer reached the sink whole, and this sink argument says how many rows its consumer
    # reads (``batch_size=bs``): ``buffer`` is then written as that prefix (``buf[:bs]``)
    width: str = ""
    # the sink field's consumer reads the whole buffer, not the view handed to it (profile
    # ``[fields.X] reads = "buffer"``): the consumer as the profile names it; ``buffer`` is then
    # the whole buffer written as ``base[:]`` and ``real`` the view's count
    beyond: str = ""
    # rows [0:padded] of a view a dummy run took and did not write (``real`` is ``(DUMMY_ROWS,)``):
    # the dummy-run function
    dummy: str = ""
    # reason "init" at a dummy run's first run: the construction value those rows hold (a literal
    # or ``empty``), judged against the sink field's neutral value where the taint reaches a sink
    init_value: str = ""
    # a buffer a captured graph reads whole, which the capture wrote with a value computed from
    # its size and no path of this replay wrote (``buffer`` is the whole buffer): the capture's
    # write as source text (its line and file are the first step)
    graph_input: str = ""
    # the slice is of an element of a persistent list named by a local (``x[:n] for x in
    # self.tables``): that list as the code names it, so that messages name the buffer
    element_of: str = ""
    # rows [0:padded] of a persistent buffer this step writes on one branch of a test only
    # (``if x is not None: buf[:n].copy_(x)`` with no write of those rows on the other branch):
    # the path that leaves them unwritten, as messages say it ("`x is not None` fails");
    # ``real`` is ``(DUMMY_ROWS,)`` (rows from 0: only a write from row 0 covers them)
    partial: str = ""
    # the writing branch's test as (function key, test text, the way it goes where the rows are
    # written): a read under the same test of that function, in its own text, reads them written
    partial_test: tuple = ()


@dataclass(frozen=True, slots=True)
class Ref:
    """A view of location ``loc``: whole buffer if ``count`` is None, else rows [:count]."""

    loc: str
    count: Count | None = None
    text: object = ""       # the expression: normalised text, or its libcst node (rendered lazily)
    line: int = 0           # where the view was taken
    persistent: bool = True
    # resets seen on the branch this view came from, kept when branches join
    # (`if mrope: x = a[:P] else: x = b[:P]; b[R:P].zero_()` leaves x clean on the else path)
    clean_at: frozenset = frozenset()
    types: frozenset = frozenset()  # class keys of the object this view holds (``pkg.mod:Cls``), if known
    path: str = ""                  # file where the view was taken
    elem_types: frozenset = frozenset()  # class keys of the elements of a container it holds
    # write extents seen on the branch this view came from (like ``clean_at``): a prefix written on
    # the path that took the view still names its real count after the paths join
    extents_at: frozenset = frozenset()
    # a whole buffer handed to a sink that declares how many rows its consumer reads
    # (``SimpleNamespace(batch_size=bs, seq_lens=buf)``): ``count`` is that width and ``width``
    # the declaring argument as written (``batch_size=bs``)
    width: str = ""
    # the sink class of an object this one is reached from (``forward_batch.spec_info`` of a
    # ForwardBatch): its consumer reads this object's fields too, so stores on it are sinks
    within: str = ""
    # the view is of storage an object keeps from its construction on (every object on the way
    # from the entry point's ``self`` is set only in ``__init__``, or is a declared field): a
    # buffer that lives across steps, whose rows past what this step wrote hold older values
    held: bool = False
    # the view was taken in a dummy run (the profile's ``[dummy_runs] functions``: the name of
    # that function), whose rows are dummy requests: a row no write of the run reached holds an
    # earlier step's values even below the real count
    dummy: str = ""
    # the view was taken under a dummy run in any class (``dummy`` only in the run's own): the
    # run's name, for :attr:`Interpreter.dummy_reads`
    dummy_any: str = ""


class AVal:
    """Base of abstract values."""

    __slots__ = ()  # its subclasses are slotted: values hold no dict each


@dataclass(frozen=True, slots=True)
class Refs(AVal):
    """One or more alternative views (after a join); ``maybe_none``: None on some path."""

    refs: frozenset[Ref]
    maybe_none: bool = False


@dataclass(frozen=True, slots=True)
class TupleVal(AVal):
    items: tuple[AVal, ...]
    mutable: bool = False  # a list literal: items may change after it (`append`, item stores)


@dataclass(frozen=True, slots=True)
class DictVal(AVal):
    """A dict with string keys known (``dict(a=x)``, ``{"a": x}``, ``d["a"] = x``): a
    ``**kwargs`` dict that may reach a sink.  ``items``: (key, value) sorted by key."""

    items: tuple[tuple[str, AVal], ...] = ()

    def get(self, key: str) -> AVal | None:
        for k, v in self.items:
            if k == key:
                return v
        return None

    def set(self, key: str, value: AVal) -> "DictVal":
        d = dict(self.items)
        d[key] = value
        return DictVal(tuple(sorted(d.items())))

    def drop(self, key: str) -> "DictVal":
        return DictVal(tuple((k, v) for k, v in self.items if k != key))


@dataclass(frozen=True, slots=True)
class MapVal(AVal):
    """A dict or list whose keys are not known (``{gid: f(gid) for gid in ...}``,
    ``d[name] = x`` in a loop): every element may be ``item``."""

    item: AVal
    keyed: bool = False  # a dict: iterating it gives its keys, not ``item``


@dataclass(frozen=True, slots=True)
class MetaVal(AVal):
    """An object built by a sink constructor; attribute stores on it are sinks.  ``fields``:
    the values its keyword arguments (and later stores) gave its fields, read back by
    ``meta.field``."""

    sink: str
    fields: DictVal = DictVal()
    cls: str = ""  # the class key, when the project defines it
    # a shallow copy (`copy.copy(meta)`): stores on it are sinks, but what it holds is not
    # followed further (its fields read back are unknown)
    opaque: bool = False


@dataclass(frozen=True, slots=True)
class FuncVal(AVal):
    """A nested function (closure) defined in an analysed function."""

    key: str


@dataclass(frozen=True, slots=True)
class ClosureVal(FuncVal):
    """A nested function taken as a value where it is defined (``super().capture(
    create_forward_fn)``, ``return forward_fn``): called elsewhere, it runs as defined there.
    ``ctx``: the defining frame's (segment, owner, module, path, class, qualified name, nested
    functions); ``env``: the enclosing locals it names, as they were when it was taken.  Equal
    by ``key`` and ``env``."""

    node: object = field(default=None, compare=False)
    ctx: tuple = field(default=(), compare=False)
    # (compared: two closures of one function over different values are different values, and a
    # summary of a callee handed one must not answer for the other)
    env: tuple = field(default=())
    # whether a callee handed it is followed for it (a lambda that calls no function value it
    # holds and no method of `self`, `get_model=lambda: self.model`, gives the callee nothing to run)
    active: bool = field(default=True, compare=False)


@dataclass(frozen=True, slots=True)
class MethodVal(AVal):
    """Project methods taken as a value (``fn = self._a if c else self._b``), to be called
    later: ``targets`` are (function key, receiver) alternatives, joined over paths."""

    targets: frozenset


@dataclass(frozen=True, slots=True)
class UnknownVal(AVal):
    pass


UNKNOWN = UnknownVal()


@dataclass(frozen=True, slots=True)
class TailVal(UnknownVal):
    """A view of rows ``[lower:upper]`` of a buffer (``tail = buf[n:p]``; ``upper`` None: to the
    end of the view ``base`` holds), counts in entry-point terms, taken where it was evaluated.
    Only writes through it are followed (``tail.zero_()``, ``tail[:] = v``, a helper's
    ``t.fill_(v)`` on it): they reset those rows of the buffer.  Read anywhere else it is an
    unknown value, as a slice that does not start at row 0 always was."""

    base: Refs = Refs(frozenset())
    lower: Count = Count("")
    upper: Count | None = None
    dim: int = 0


@dataclass(frozen=True, slots=True)
class FactVal(UnknownVal):
    """The result of a test the path conditions know (``use_spec = self.spec is not None``):
    unknown as a value, but a test of a name holding it (also a callee's parameter it was passed
    to) is that test, with its facts for each branch (:meth:`Interpreter._cond_keys`)."""

    then_keys: frozenset = frozenset()
    else_keys: frozenset = frozenset()
    chains: tuple = ()  # the attribute chains the test reads (a function storing one tests another value)


@dataclass(frozen=True, slots=True)
class BoolVal(UnknownVal):
    """The literal ``True`` or ``False``, held by a name or a callee's parameter it was passed to
    (``self.execute_model(batch, dummy_run=True)``, or a default ``dummy_run: bool = False`` not
    passed): a test of that name has one outcome, so the other branch is not a path of this call.
    Unknown as any other value (joined with anything else it is unknown; a field of an object
    never holds one: a field may be stored on some paths only)."""

    value: bool = False


@dataclass(frozen=True, slots=True)
class MaskVal(UnknownVal):
    """A mask compared from a range of row numbers (``torch.arange(P) < R``): True on rows
    ``[0:R]`` and False on the padding rows ``[R:P]`` (``below``), or the reverse
    (``torch.arange(P) >= R``).  ``real`` is R as the code writes it; ``real_canon`` /
    ``padded_canon`` the counts' canonical names."""

    real: str = ""
    real_canon: str = ""
    padded_canon: str = ""
    below: bool = True


def no_literal(v: AVal) -> AVal:
    """``v``, or an unknown value for a literal (:class:`BoolVal`) that is not known to hold where
    ``v`` goes (a field read back, a key one joined path did not set, a closure called later)."""
    return UNKNOWN if isinstance(v, BoolVal) else v


def _join_keys(x: AVal | None, y: AVal | None) -> AVal:
    """One key of two joined dicts: a key one path did not set holds the other's value, but not a
    literal (it is not known to hold on the path that did not set it)."""
    return join_vals(x, y) if x is not None and y is not None else no_literal(x or y)


def _is_none(v) -> bool:
    return getattr(v, "canon", 0) is None  # CountVal(None): the value None


def join_vals(a: AVal | None, b: AVal | None) -> AVal:
    """The value of a name after two paths join: alternatives of views are kept
    (stale if any is), a tensor wins over None or a scalar (its rows still
    matter), tuples join elementwise."""
    if a is None:
        return b if b is not None else UNKNOWN
    if b is None or a == b:
        return a
    # a test's result, a range mask or a literal joined with anything else is an unknown value (a tensor on
    # the other side still wins below)
    if isinstance(a, (FactVal, MaskVal, BoolVal)):
        a = UNKNOWN
    if isinstance(b, (FactVal, MaskVal, BoolVal)):
        b = UNKNOWN
    if a == b:
        return a
    if isinstance(a, TailVal) or isinstance(b, TailVal):
        # two different views of padding rows (or one and something else): which rows the name
        # holds after the join is not one range
        return UNKNOWN
    if (is_extremum(getattr(a, "canon", None)) or is_extremum(getattr(b, "canon", None))) and (
            getattr(a, "padded", None) is None or getattr(b, "padded", None) is None):
        return UNKNOWN  # a bound joined with a value that is no count (`m = m - 1` rounds)
    # two counts: the padded one wins (its padding rows must be judged); `padded` is set by
    # the interpreter, which knows the profile
    if getattr(a, "padded", None) is not None and getattr(b, "padded", None) is not None:
        if a.padded != b.padded:
            return a if a.padded else b
        if is_extremum(a.canon) or is_extremum(b.canon):
            # a bound (`max(n, m)`) claims the rows up to it: the joined path holds one of the two
            # values, so it is at least their minimum (a loop's `m = max(m, x)` rounds keep
            # covering what both cover; `m = m - 1` rounds, or another count, do not)
            if a.canon is None or b.canon is None:
                return UNKNOWN
            name = extremum("min", [(a.canon, a.offset), (b.canon, b.offset)])
            return replace(a, canon=name, offset=0) if name is not None else UNKNOWN
        # two padded (or two real) counts: one of them, the same whatever the order of the join
        # (the alternatives of an object's field come from a set: a message must not depend on
        # the run's string hashes)
        return min(a, b, key=lambda c: (c.canon is None, c.canon or "", c.offset))
    if isinstance(a, Refs) and isinstance(b, Refs):
        if b.refs <= a.refs and (a.maybe_none or not b.maybe_none):
            return a  # (the same value: no new set)
        if a.refs <= b.refs and (b.maybe_none or not a.maybe_none):
            return b
        return Refs(a.refs | b.refs, a.maybe_none or b.maybe_none)
    if isinstance(a, MethodVal) and isinstance(b, MethodVal):
        return MethodVal(a.targets | b.targets)
    if isinstance(a, MapVal) or isinstance(b, MapVal):
        # a container of unknown keys joined with another (or with an empty dict literal)
        items = [x.item if isinstance(x, MapVal) else join_all(v for _, v in x.items) if isinstance(x, DictVal)
                 else None for x in (a, b)]
        empty = [isinstance(x, DictVal) and not x.items for x in (a, b)]
        if all(i is not None or e for i, e in zip(items, empty)) or _is_none(a) or _is_none(b):
            return MapVal(join_vals(items[0], items[1]),
                          any(isinstance(x, DictVal) or getattr(x, "keyed", False) for x in (a, b)))
    # None on one path (`x = None`): the tensor's rows still matter, and a fix must guard
    if isinstance(a, Refs) and _is_none(b):
        return Refs(a.refs, True)
    if isinstance(b, Refs) and _is_none(a):
        return Refs(b.refs, True)
    # a tensor on one path and None/a scalar on another: the tensor's rows still matter
    if isinstance(a, Refs) and not isinstance(b, (TupleVal, MetaVal)):
        return a
    if isinstance(b, Refs) and not isinstance(a, (TupleVal, MetaVal)):
        return b
    if isinstance(a, TupleVal) and isinstance(b, TupleVal):
        if len(a.items) != len(b.items):
            return UNKNOWN  # which position holds what depends on the path
        return TupleVal(tuple(join_vals(x, y) for x, y in zip(a.items, b.items)), a.mutable or b.mutable)
    if isinstance(a, DictVal) and isinstance(b, DictVal):
        keys = sorted({k for k, _ in a.items} | {k for k, _ in b.items})
        return DictVal(tuple((k, _join_keys(a.get(k), b.get(k))) for k in keys))
    if isinstance(a, MetaVal) and isinstance(b, MetaVal) and a.sink == b.sink:
        return MetaVal(a.sink, join_vals(a.fields, b.fields), a.cls or b.cls)
    if isinstance(a, MetaVal):
        return a
    if isinstance(b, MetaVal):
        return b
    return a if not isinstance(a, UnknownVal) else b


@dataclass(frozen=True, slots=True)
class LocState:
    """Padding state of one location.

    ``entry_stale``: rows may hold values from an earlier step (persistent
    buffers at an entry point).  ``taints``: explicit reasons (derived or
    allocated tensors).  ``clean``: resets seen so far.  ``extents``: the
    prefixes ``[:k + offset]`` this step wrote (``(k, offset)``, counts in
    entry-point terms): a slice ``[:n]`` of the buffer with ``n`` another count
    has rows ``[k:n]`` the step did not write (the FunArray segments of one
    buffer: written ``[0, k)``, stale ``[k, n)``).
    """

    entry_stale: bool = True
    taints: frozenset[Taint] = frozenset()
    clean: frozenset = frozenset()
    extents: frozenset = frozenset()

    def __post_init__(self) -> None:
        # one empty set for every state: `a | b` and `a & b` make a new 216-byte empty set each
        # time (on SGLang 0.5.23, 0.5 M of them were held by states)
        for name in ("taints", "clean", "extents"):
            v = getattr(self, name)
            if not v and v is not NOSET:
                object.__setattr__(self, name, NOSET)

    def join(self, other: "LocState", branches: bool = False) -> "LocState":
        """Padding state after two paths join: stale or tainted if either is; reset only
        where both reset (:func:`meet_resets`).  ``branches``: the two branches of one test
        join (see :data:`PERSISTENT`)."""
        if self is other:
            return self
        if branches and self is PERSISTENT:
            extents = other.extents
        elif branches and other is PERSISTENT:
            extents = self.extents
        else:
            # prefixes written on both paths: a write on one path only (one class of a dispatch,
            # one branch) says nothing about the rows the other path left
            extents = _meet(self.extents, other.extents)
        return LocState(
            entry_stale=self.entry_stale or other.entry_stale,
            taints=_union(self.taints, other.taints),
            clean=meet_resets(self.clean, other.clean),
            extents=extents,
        )


#: the empty set the values share (see :meth:`LocState.__post_init__`)
NOSET: frozenset = frozenset()


def _union(a: frozenset, b: frozenset) -> frozenset:
    """``a | b``, one of the two where it is the other's superset (no new set)."""
    if b <= a:
        return a
    if a <= b:
        return b
    return a | b


def _meet(a: frozenset, b: frozenset) -> frozenset:
    """``a & b``, one of the two where it is the other's subset (no new set)."""
    if a <= b:
        return a
    if b <= a:
        return b
    return a & b


#: The state of a persistent buffer no write of this step reached (the very object: a state that
#: only looks like it, after a join, is not).  Where the two branches of a test join and one
#: wrote a prefix ``[:k]`` of a buffer the other did not touch, rows past ``k`` are unwritten on
#: both (on the other, all rows are): the prefix is kept, so a later slice to another count still
#: has its padding rows named (``if bufs is not None: bufs[:k].copy_(x)``).  Not where the
#: classes of a dispatch join: only one of them runs, and another's prefix would describe rows
#: it never writes (:meth:`LocState.join`).
PERSISTENT = LocState()


def summary_location(loc: str) -> bool:
    """Whether a pool's location stands for several buffers the code tells apart by nothing the
    analysis knows: the pool's any element (no key).  A write there is a write of one of them (a
    weak update, :meth:`Heap.__setitem__`).  An element whose key has an unknown part
    (``('seq_lens', ?)``: every size) is taken as one buffer (a runner resets the view it
    captures; two sizes of one name in one runner are not told apart: a known gap)."""
    return loc.startswith("pool:") and "[" not in loc


class Heap(dict):
    """The heap of one path: location -> :class:`LocState` (and ``@loc.field`` -> value).

    It remembers the keys written since it was copied (``dirty``), so that a
    join of two paths that forked from one state compares only what either
    path wrote (mypy's binder keeps frames of changes for the same reason),
    and a running hash of its items (``fingerprint``), so that a callee's
    summary is looked up without hashing the whole heap.
    """

    __slots__ = ("dirty", "base", "fingerprint", "reads")

    def __init__(self, items=(), dirty=None, fingerprint=None, base=frozenset(), reads=None):
        super().__init__(items)
        # the interpreter's stack of read logs (one set per callee being interpreted), shared by
        # every heap forked or joined from this one: a callee's summary depends on what it read
        self.reads: list | None = reads if reads is not None else getattr(items, "reads", None)
        self.dirty: set[str] = set(dirty) if dirty is not None else set(self)
        # keys the parent path had written (since its own fork) when this heap was forked
        # from it: the join that continues the parent path marks them written again, so that
        # the join of the parent with its own sibling compares them
        self.base = base
        if fingerprint is None:
            fingerprint = 0
            for k, v in self.items():
                fingerprint ^= hash((k, v))
        self.fingerprint: int = fingerprint

    def __setitem__(self, key, value) -> None:
        old = dict.get(self, key, _MISSING)  # not a read: what was there does not matter
        if key.startswith("pool:") and isinstance(value, LocState) and summary_location(key):
            # a weak update: the location stands for several buffers, one of which is written
            value = (old if isinstance(old, LocState) else PERSISTENT).join(value)
        if old is value:
            return
        if self.reads:
            _note_old(self.reads, key, old)
        if old is not _MISSING:
            self.fingerprint ^= hash((key, old))
        self.fingerprint ^= hash((key, value))
        self.dirty.add(key)
        super().__setitem__(key, value)

    def __delitem__(self, key) -> None:
        old = dict.get(self, key, _MISSING)
        if old is _MISSING:
            return
        if self.reads:
            _note_old(self.reads, key, old)
        self.fingerprint ^= hash((key, old))
        self.dirty.add(key)
        super().__delitem__(key)

    def fork(self) -> "Heap":
        """A copy for one branch: same items, nothing written yet (the parent's written keys
        are kept as ``base``, by reference: the parent is not written while its branches run)."""
        return Heap(self, (), self.fingerprint, self.dirty, self.reads)

    def get(self, key, default=None):
        v = dict.get(self, key, _MISSING)
        if self.reads:
            log = self.reads[-1]
            s = log.saved
            if key not in s or s[key] is v:
                log.keys.add(key)  # the value the callee was given: its summary depends on it
        return default if v is _MISSING else v


_MISSING = object()


def _note_old(logs: list, key, old) -> None:
    """Keep ``old``, the value ``key`` held before a write, in each read log of ``logs`` (the
    callees being interpreted, innermost last) that has none for ``key`` yet: the value it had
    at that callee's call.  A log that has one was written there since its call, and so were
    the logs of its callers (the write that put it there put it in theirs): the walk stops."""
    for log in reversed(logs):
        s = log.saved
        if key in s:
            return
        s[key] = old


class ReadLog:
    """What one callee being interpreted read of the heap it was given: the keys whose value,
    when read, was still the one the heap held at the call.  A key read after the callee (or
    its callees) wrote it on that path is not an input: its value is the callee's own,
    computed from what it read (an object the callee allocates, read again by the same
    callee, would otherwise tie its summary to what the previous call left there).  A join
    reads both sides of a key only one path wrote, so the side that kept the given value is
    logged there.

    The heap at the call is not copied (a copy per call cost as much as the heap had keys:
    thousands, at tens of thousands of calls on SGLang's scheduler): every heap a callee's
    paths write was forked or joined from the one it was given, and each write keeps the
    value it replaces here, the first time the key is written since the call (``saved``, on
    any path: absent ones as a sentinel).  So a key not in ``saved`` holds on every path of
    the callee what it held at the call, and ``saved`` names every key in which two of them
    may differ (:meth:`State.join`) and every key the callee may have changed."""

    __slots__ = ("saved", "keys")

    def __init__(self):
        self.keys: set = set()
        self.saved: dict = {}

    def at_call(self, key, heap: dict, default=None):
        """The value ``key`` held at this log's call; ``heap`` is a heap of its callee's paths."""
        s = self.saved
        v = s[key] if key in s else dict.get(heap, key, _MISSING)
        return default if v is _MISSING else v

    def given(self, keys, heap: dict, inner: "ReadLog | None" = None) -> list:
        """Of ``keys``, those whose value in ``heap`` (a heap of this log's callee's paths) is the
        one this log's callee was given; with ``inner``, the log of a callee of that callee
        that has just returned to it (``heap`` its exit), those whose value at ``inner``'s call
        was the one given to this log's callee."""
        s = self.saved
        if inner is None:
            return [k for k in keys if k not in s or s[k] is dict.get(heap, k, _MISSING)]
        i = inner.saved  # (a key written since the inner call was written since this one: in ``s``)
        return [k for k in keys if k not in s
                or s[k] is (i[k] if k in i else dict.get(heap, k, _MISSING))]


#: heap key prefix marking an object field (``UNSET + "@loc.f"``) that some path joined here did
#: not store: its joined value is not what every path holds (a count a replay reads off the
#: object is judged only where every path to it stored that count)
UNSET = "!unset"

#: env key (no identifier) holding the names some path joined into this state did not bind: a
#: count the engine picks from the names in scope (a replay's padded size) must be bound on
#: every path, or it may be another step's
PARTIAL = "\x00partial"


class State:
    """Flow state on one path: local values, count bindings live in frames; heap here."""

    __slots__ = ("env", "heap", "unset")

    def __init__(self, env: dict[str, AVal] | None = None, heap: dict[str, LocState] | None = None):
        self.env: dict[str, AVal] = env if env is not None else {}
        #: after a join: the object fields (``@loc.f``) some joined path stored and another did not
        self.unset: frozenset = frozenset()
        if heap is None:
            heap = Heap()
        elif not isinstance(heap, Heap):
            heap = Heap(heap)
        self.heap: Heap = heap

    def copy(self) -> "State":
        return State(dict(self.env), self.heap.fork())

    def loc(self, loc: str) -> LocState:
        return self.heap.get(loc, PERSISTENT)

    @staticmethod
    def join(states: Iterable["State | None"], branches: bool = False, full: bool = False) -> "State | None":
        """Join the live states (None: a path that returned or raised); None if none is live.
        ``branches``: the states are the ends of the branches of one test (:data:`PERSISTENT`).
        ``full``: the states may have forked at different depths (the ways out of a function:
        an early ``return`` under a test and the end of the body; a loop's ``continue``,
        ``break`` and body end): every key whose value differs is compared, not only those
        the written-key sets name (a write made before a nested fork and join is no longer in
        them: the join kept the other path's value and lost the write).  One pass over the
        heaps, the cost of a copy.

        Views that differ between paths carry the resets seen on their own path
        (``Ref.clean_at``), so a reset on the branch that took the view still counts.
        """
        live = [s for s in states if s is not None]
        if not live:
            return None
        if len(live) == 1:
            return live[0]
        first = live[0].heap
        written = set(first.base).union(*(s.heap.dirty for s in live))
        differ: dict[int, set] = {}
        if full:
            # inside a callee, only the keys written since its call may differ (its read log's
            # ``saved``: every path joined here was forked from the heap it was given); in an
            # entry point's own body, every key
            logs = first.reads
            cand = logs[-1].saved if logs else None
            for s in live[1:]:
                h = s.heap
                if h is first:
                    continue
                if cand is not None:
                    d = {k for k in cand if dict.get(h, k, _MISSING) is not dict.get(first, k, _MISSING)}
                else:
                    d = {k for k, v in h.items() if dict.get(first, k, _MISSING) is not v}
                    d.update(k for k in first if k not in h)
                differ[id(h)] = d
                written |= d
        out = State({}, Heap(first, written, first.fingerprint))
        fields: set[str] = set()
        records: set[str] = set()
        unset: set[str] = set()
        for s in live[1:]:
            if s.heap is first:
                continue
            # two paths forked from one state differ only where one of them wrote
            for k in differ[id(s.heap)] if full else first.dirty | s.heap.dirty:
                if k.startswith("@"):  # an object field's value (see Interpreter._field)
                    fields.add(k)
                    continue
                if k.startswith("?"):  # a record of a join (Interpreter._keep_conditional)
                    records.add(k)
                    continue
                if k.startswith("!"):  # a mark that some path did something (Interpreter._opaque)
                    if dict.get(out.heap, k) is None and s.heap.get(k) is not None:
                        out.heap[k] = s.heap.get(k)
                    continue
                a, b = out.heap.get(k), s.heap.get(k)
                if a is b or a == b:
                    continue
                out.heap[k] = (a or PERSISTENT).join(b or PERSISTENT, branches)
        for k in records:
            # kept only where every path holds it: a path that did not go through that join, or
            # stored the field since, makes it say nothing of the joined path
            if any(dict.get(s.heap, k) != dict.get(first, k) for s in live[1:]):
                del out.heap[k]
        for k in fields:
            vals = [s.heap.get(k) for s in live]
            if all(v is vals[0] or v == vals[0] for v in vals[1:]):
                continue
            if any(v is None for v in vals):
                # stored on some paths only: what the others read is what an earlier call left
                out.heap[UNSET + k] = True
                unset.add(k)
            # like a variable's views below: a view held in an object's field keeps the resets
            # of the path that stored it (`if pcp: batch = replace(batch, seq_lens=v)` after
            # `v[n:].zero_()`: the other path neither resets nor reads that buffer)
            out.heap[k] = _join_stamped(live, vals)
        partial: set[str] = set()
        for k in set().union(*(s.env for s in live)):
            if k == PARTIAL:
                continue
            vals = [s.env.get(k) for s in live]
            if any(k not in s.env for s in live):
                partial.add(k)
            first = vals[0]
            if all(v is first or v == first for v in vals[1:]):
                out.env[k] = first
                continue
            out.env[k] = _join_stamped(live, vals)
        partial.update(*(s.env.get(PARTIAL, ()) for s in live))
        if partial:
            out.env[PARTIAL] = frozenset(partial)
        out.unset = frozenset(unset)
        return out


def join_all(vals) -> AVal | None:
    """The join of several values (None for none)."""
    out: AVal | None = None
    for v in vals:
        out = join_vals(out, v)
    return out


def _join_stamped(live: list["State"], vals: list) -> "AVal | None":
    """Join one variable's (or object field's) values from the states ``live``, each view
    stamped with the resets its own path saw on its location (``Ref.clean_at``)."""
    joined: AVal | None = None
    for s, v in zip(live, vals):
        joined = join_vals(joined, stamp(v, s))
    return joined


def stamp(v: AVal | None, state: "State", active: frozenset | None = None,
          conditional_only: bool = False) -> AVal | None:
    """``v`` with each view in it (also inside tuples, dicts and containers) stamped with the
    resets and write extents ``state`` holds on its location (:attr:`Ref.clean_at`,
    :attr:`Ref.extents_at`), so they travel with the value out of that path.  ``active``: the
    path conditions that hold where ``v`` was taken; a reset made under them holds for ``v``
    wherever it goes (``None if x is None else buf`` after ``if x is not None: buf.zero_()``).
    ``conditional_only``: stamp only those resets (a view bound to a name under a test: the
    resets made under the same test hold for it, in a callee too, where the test is not active)."""
    if isinstance(v, Refs):
        refs = []
        changed = False
        for r in v.refs:
            st = state.loc(r.loc)
            clean = st.clean
            if conditional_only:
                clean = frozenset(replace(x, when=frozenset()) for x in clean if x.when and x.when <= active)
                extents = r.extents_at
            else:
                extents = st.extents
                if active:
                    clean = frozenset(replace(x, when=frozenset()) if x.when and x.when <= active else x
                                      for x in clean)
            if clean <= r.clean_at and extents <= r.extents_at:
                refs.append(r)  # nothing to add: the same view (no copy, and joins compare by identity)
            else:
                refs.append(replace(r, clean_at=r.clean_at | clean, extents_at=r.extents_at | extents))
                changed = True
        return Refs(frozenset(refs), v.maybe_none) if changed else v
    if isinstance(v, MapVal):
        item = stamp(v.item, state, active, conditional_only)
        return v if item is v.item else MapVal(item, v.keyed)
    if isinstance(v, TupleVal):
        items = tuple(stamp(x, state, active, conditional_only) for x in v.items)
        return v if all(a is b for a, b in zip(items, v.items)) else TupleVal(items, v.mutable)
    if isinstance(v, DictVal):
        items = tuple((k, stamp(x, state, active, conditional_only)) for k, x in v.items)
        return v if all(a[1] is b[1] for a, b in zip(items, v.items)) else DictVal(items)
    if isinstance(v, MetaVal):
        fields = stamp(v.fields, state, active, conditional_only)
        return v if fields is v.fields else MetaVal(v.sink, fields, v.cls)
    return v


def meet_resets(a: frozenset, b: frozenset) -> frozenset:
    """Resets that hold on both joined paths: rows reset on each, values of both kept.

    A whole-buffer reset on one path and ``[R:]`` on the other give ``[R:]``;
    differing values are joined with ``|`` so the sink accepts only if both are neutral.
    """
    if a == b:
        return a
    out = set()
    for ra in a:
        for rb in b:
            if ra.real != ALL and rb.real != ALL and ra.dim != rb.dim:
                continue
            if ra.when != rb.when and not (ra.when <= rb.when or rb.when <= ra.when):
                # resets under unrelated tests: their meet would hold only under both, and
                # meeting every such pair makes the set grow with the paths; dropped
                continue
            if (ra.exact or rb.exact) and ra.upto != rb.upto:
                continue  # a reset known only up to its own count covers no other count
            dim = rb.dim if ra.real == ALL else ra.dim
            if ra.real == ALL:
                real, off = rb.real, rb.offset
            elif rb.real == ALL or ra.real == rb.real:
                real, off = ra.real, max(ra.offset, rb.offset) if rb.real != ALL else ra.offset
            else:
                continue
            values = sorted({*ra.value.split("|"), *rb.value.split("|")})
            out.add(Reset(real, off, "|".join(values) if len(values) > 1 else values[0],
                          min(ra.line, rb.line) or max(ra.line, rb.line), _union(ra.sites, rb.sites),
                          _union(ra.when, rb.when), ra.upto or rb.upto, dim, ra.exact or rb.exact))
    if sum(1 for r in out if r.when) > MAX_CONDITIONAL_RESETS:
        out = {r for r in out if not r.when}  # bounded: dropping a reset only adds findings
    return frozenset(out) if out else NOSET


#: the conditional resets (:attr:`Reset.when`) one location keeps at a join at most
MAX_CONDITIONAL_RESETS = 16

#: ``Taint.real`` of rows a dummy run handed out without writing them: every row of the slice,
#: from row 0 (only a reset of the whole buffer, or from row 0, covers them)
DUMMY_ROWS = "0"


def covering(clean: frozenset, taint: "Taint", is_real_for: Callable[[str, str], bool],
             active: frozenset = frozenset()) -> list["Reset"]:
    """The resets in ``clean`` whose rows include the padding rows of the taint's slice; a reset
    made under path conditions counts only where they all hold (``active``)."""
    out = []
    for r in clean:
        if r.when and not r.when <= active:
            continue
        if r.exact and (taint.offset > 0 or r.upto not in (taint.padded, taint.padded_written)):
            continue
        if taint.real == (DUMMY_ROWS,):
            if r.real == ALL or (r.real == DUMMY_ROWS and not r.offset and r.dim == taint.dim):
                out.append(r)
            continue
        if r.real == ALL or (r.offset <= taint.offset and r.dim == taint.dim and (
                r.real in taint.real or is_real_for(r.real, taint.padded) or
                (taint.padded_written and is_real_for(r.real, taint.padded_written)))):
            out.append(r)
    return out


def covers(clean: frozenset, taint: "Taint", is_real_for: Callable[[str, str], bool],
           accepts: Callable[[str], bool] | None = None, active: frozenset = frozenset()) -> bool:
    """True if a reset in ``clean`` covers the taint's padding rows with an acceptable value."""
    return any(accepts is None or accepts(r.value) for r in covering(clean, taint, is_real_for, active))


def origin_key(t: Taint) -> str:
    """The origin of a stale taint: the buffer its padded slice was taken from (``self.seq_lens``
    of ``self.seq_lens[:num_reqs_padded]``: each needs its own reset), or "" for a tensor
    derived from stale inputs (one origin, however many inputs: one reset of it fixes all).  A
    slice of an element of a persistent list (``x[:n] for x in self.tables``) has that list as its
    origin, whatever the loop variable is called."""
    if t.derived_from:
        return ""
    if t.element_of:
        return t.element_of
    i = t.buffer.find("[")
    base = t.buffer[:i] if i > 0 else t.buffer
    # rows a branch left unwritten are written on that branch, not reset at the sink: another fix
    return f"{base} (rows from 0)" if t.partial else base


def with_step(t: Taint, line: int, note: str, derived_from: str | None = None, path: str = "") -> Taint:
    return replace(t, steps=t.steps + ((line, note, path),),
                   derived_from=t.derived_from if derived_from is None else derived_from)


def bound_text(canon: str, offset: int = 0) -> str:
    """A count as a term of a symbolic bound: ``n``, ``n+1``, ``n-2``."""
    return canon if not offset else f"{canon}{offset:+d}"


def extremum(fn: str, args: Iterable[tuple[str, int]]) -> str | None:
    """The name of the count ``max(a, b, ...)`` / ``min(...)`` (``fn``) of counts given as
    ``(canon, offset)``: a symbolic bound whose name says how it relates to its arguments
    (:func:`at_least`).  One count however written: the arguments are sorted and deduplicated, and
    an argument that is itself a ``fn`` of the same kind is flattened (``max(a, max(a, b))`` is
    ``max(a, b)``, so a maximum a loop keeps, ``m = max(m, x)``, names one count every round).
    None when the name would be longer than :data:`MAX_BOUND_TEXT`."""
    terms: set[str] = set()
    for c, o in args:
        inner = _extremum_args(c) if not o else None
        if inner is not None and inner[0] == fn:
            terms.update(bound_text(a, a_off) for a, a_off in inner[1])
        else:
            terms.add(bound_text(c, o))
    out = f"{fn}({', '.join(sorted(terms))})"
    return out if len(out) <= MAX_BOUND_TEXT else None


#: the longest name of a symbolic bound (:func:`extremum`) kept; a longer one is no count
MAX_BOUND_TEXT = 160


def is_extremum(canon: str | None) -> bool:
    """True for a count named by :func:`extremum` (``max(a, b)``)."""
    return bool(canon) and _extremum_args(canon) is not None


def opaque_term(text: str) -> str:
    """A term of a bound that is no count (source text such as ``len(xs) - k``): one atom in
    parentheses, never read as a maximum, a minimum or an offset (:func:`_extremum_args`).  A
    dotted name (``self._num_dirty_rows``) or an integer is one as it is written."""
    if all(part.isidentifier() for part in text.split(".")) or text.lstrip("-").isdigit():
        return text
    return f"({text})"


def _extremum_args(canon: str) -> tuple[str, list[tuple[str, int]]] | None:
    """``("max", [(a, 0), (b, 1)])`` of a name built by :func:`extremum`; None otherwise (also
    for text that only starts like one: ``max(a, b) - max(c, d)``)."""
    if not canon.startswith(("max(", "min(")) or not _closes_at_end(canon[3:]):
        return None
    parts, depth, start = [], 0, 4
    for i in range(4, len(canon) - 1):
        ch = canon[i]
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(canon[start:i].strip())
            start = i + 1
    parts.append(canon[start:-1].strip())
    out = []
    for p in parts:
        if p.startswith("(") and p.endswith(")") and _closes_at_end(p):
            out.append((p, 0))  # an opaque term: no offset of its own
            continue
        i = len(p)
        while i > 0 and p[i - 1].isdigit():
            i -= 1
        if 0 < i < len(p) and p[i - 1] in "+-" and i > 1:
            out.append((p[:i - 1], int(p[i - 1:])))
        else:
            out.append((p, 0))
    return canon[:3], out


def _closes_at_end(text: str) -> bool:
    """True when the parenthesis opening ``text`` closes at its last character."""
    depth = 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
            if depth == 0:
                return i == len(text) - 1
    return False


def at_least(k: str, k_off: int, c: str, c_off: int, depth: int = 0) -> bool:
    """True when the count ``k + k_off`` is known to be at least ``c + c_off`` from the counts'
    names alone: the same count with no smaller offset, ``max(..., c, ...)`` (a maximum is at
    least each argument), ``c`` a ``min(..., k, ...)``, a minimum all of whose arguments are at
    least ``c``, ``c`` a maximum of arguments each at most ``k``.  A prefix write ``buf[:k]`` then
    covers the rows of a view ``buf[:c]``."""
    if k == c:
        return k_off >= c_off
    if depth > 8:
        return False
    mk, mc = _extremum_args(k), _extremum_args(c)
    if mk is not None:
        fn, args = mk
        test = any if fn == "max" else all  # a maximum is at least each argument; a minimum, none
        if test(at_least(a, a_off + k_off, c, c_off, depth + 1) for a, a_off in args):
            return True
    if mc is not None:
        fn, args = mc
        test = any if fn == "min" else all
        if test(at_least(k, k_off, a, a_off + c_off, depth + 1) for a, a_off in args):
            return True
    return False


def real_in_scope(taint: Taint, pair, real_names: dict, count_locals: dict) -> tuple[str | None, str | None, bool]:
    """The real count of ``taint``'s stale rows ``[real:padded]`` at a sink: its canonical name
    (entry-point terms), the name in scope there that shows it (None where none does), and
    whether that name holds the real count there (a reset from it covers the stale rows).

    A real count inferred from the step's writes (``taint.real``) is a value: the name in scope
    bound to it.  A real count the profile pairs with the padded one (``pair``: ``num_tokens``
    and ``num_tokens_unpadded`` for ``num_tokens_padded``) is a name: a count of that name in
    scope whose value is itself one of the pair's real counts (or not known) is it, before a
    local that holds the value of the entry point's namesake on one path only (a dummy run's
    callee whose ``max_query_len`` is the caller's ``num_tokens`` where the batch is not a
    uniform decode, and whose own ``num_tokens`` is the caller's ``num_tokens_unpadded``).  A
    local of that name holding another count (``num_tokens = num_reqs``, ``num_tokens =
    num_tokens_padded``) is not.  A parameter of that name a call bound to a padded count (a
    dummy run passing its padded count as the callee's real one) is the name shown, and holds
    no real count (``count_locals``: name -> (count, padded, parameter))."""
    reals = taint.real or (pair.real if pair is not None else ())
    if not taint.real:
        for r in reals:
            got = count_locals.get(r)
            if got is None:
                continue
            canon, padded, param = got
            if padded:
                if param:
                    return r, r, False
                continue
            if canon == r or canon in reals:
                return r, r, True
    canon = next((r for r in reals if r in real_names), reals[0] if reals else None)
    name = real_names.get(canon) if canon else None
    return canon, name, name is not None
